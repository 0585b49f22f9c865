/**
 * Test support: an HTTP server in front of the fake upstream that makes Claude Code start a
 * sub-agent. A Messages request whose conversation holds {@link SPAWN_WORD} and no tool result yet
 * is answered here with a streamed `Agent` tool call (the tool Claude Code 2.1.328 offers for
 * sub-agents: `description`, `prompt`, `subagent_type`); every other request is passed to the
 * fake upstream unchanged, so accounts, tokens and rate-limit headers stay the sim's. The hint
 * headers of every Messages request are kept in `seen`, in arrival order.
 * Findings made this way: docs/claude-code-client.md#request-classes.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The word in a prompt that makes the first answer a sub-agent call. */
export const SPAWN_WORD = 'SPAWN';

/** The hint headers of one Messages request (undefined when absent). */
export interface SeenRequest {
  /** True when this server answered it with the Agent tool call (it never reached the fake upstream). */
  answeredHere: boolean;
  sessionId: string | undefined;
  requestClass: string | undefined;
  promptId: string | undefined;
  agentId: string | undefined;
}

export interface AgentUpstream {
  /** Base URL, `http://127.0.0.1:PORT`. */
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

const header = (req: http.IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The SSE answer: one `Agent` tool_use block whose prompt starts the sub-agent. */
function agentCallEvents(): string {
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
  const input = { description: 'sub task', prompt: 'SUBTASK: say hi from the sub-agent', subagent_type: 'general-purpose' };
  return (
    ev('message_start', {
      message: { id: 'msg_agent_call', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage },
    }) +
    ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_agent_call', name: 'Agent', input: {} } }) +
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } }) +
    ev('content_block_stop', { index: 0 }) +
    ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } }) +
    ev('message_stop', {})
  );
}

/** Starts the server on a free loopback port, in front of the fake upstream at `simUrl`. */
export async function startAgentUpstream(simUrl: string): Promise<AgentUpstream> {
  const seen: SeenRequest[] = [];
  const target = new URL(simUrl);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = body.toString('utf8');
      const messages = req.method === 'POST' && (req.url ?? '').startsWith('/v1/messages') && !(req.url ?? '').includes('count_tokens');
      const spawn = messages && text.includes(SPAWN_WORD) && !text.includes('tool_result') && header(req, 'x-claude-code-request-class') !== 'subagent';
      if (messages) {
        seen.push({
          answeredHere: spawn,
          sessionId: header(req, 'x-claude-code-session-id'),
          requestClass: header(req, 'x-claude-code-request-class'),
          promptId: header(req, 'x-claude-code-prompt-id'),
          agentId: header(req, 'x-claude-code-agent-id'),
        });
      }
      if (spawn) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(agentCallEvents());
        return;
      }
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
