import "server-only";

// How many streams of one kind each session (a signed-in browser) holds open on this instance: each
// is a socket and a subscriber, so one session must not pin the server's sockets, while new
// sessions are bounded by the sign-in limit. Counted per session rather than per user: a team
// sharing one account in many browsers is not one tab-hoarder. Per instance, as the sockets are.

export interface SessionStreams {
  /** Counts one of the session's open streams, or throws `refuse(open)` past the cap; the returned function uncounts it (once). */
  open(sessionId: string): () => void;
}

export function sessionStreams(
  /** Read at every open, so a test can lower it. */
  limits: { streamsPerSession: number },
  refuse: (open: number) => Error,
): SessionStreams {
  const openStreams = new Map<string, number>();
  return {
    open(sessionId) {
      const open = openStreams.get(sessionId) ?? 0;
      if (open >= limits.streamsPerSession) throw refuse(open);
      openStreams.set(sessionId, open + 1);
      let counted = true;
      return () => {
        if (!counted) return;
        counted = false;
        const left = (openStreams.get(sessionId) ?? 1) - 1;
        if (left > 0) openStreams.set(sessionId, left);
        else openStreams.delete(sessionId);
      };
    },
  };
}
