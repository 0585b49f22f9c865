/**
 * The User-Agent of the router's own requests to Anthropic's OAuth token endpoint (sign-in and
 * refresh): `claude-router/<version>`, the version of package.json (bundled into dist/ at build
 * time). Peers report rate-limit errors from the token endpoint for requests without one.
 */
import { version } from '../../package.json';

/** `claude-router/<version>`, e.g. `claude-router/0.1.0`. */
export const ROUTER_USER_AGENT = `claude-router/${version}`;
