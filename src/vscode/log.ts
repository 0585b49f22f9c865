/** The Logger of the engine, written to one VS Code LogOutputChannel (levels chosen by the user). */
import * as vscode from 'vscode';
import type { Logger } from '../proxy/log';

export function channelLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
    debugEnabled: () => channel.logLevel <= vscode.LogLevel.Debug,
  };
}
