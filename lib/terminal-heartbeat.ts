// The terminal's heartbeat frames, shared by the page (components/sandboxes/terminal/pty-connection.ts)
// and the relay that answers them (lib/server/pty-relay.ts). A page cannot send WebSocket pings nor
// see the server's, so it sends HEARTBEAT_PING as a text frame and the relay answers HEARTBEAT_PONG
// itself; the upstream never sees either.
export const HEARTBEAT_PING = '{"type":"ping"}';
export const HEARTBEAT_PONG = '{"type":"pong"}';
