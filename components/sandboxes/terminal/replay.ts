// A PTY session outlives its WebSocket: when the browser reattaches, the engine first replays the
// last 64 KiB of output (its scrollback), then live output. The terminal on screen already shows
// most of that, so only the part it missed while disconnected is written: the replay minus its
// longest prefix that the received output already ends with (KMP failure function, linear time).

/** How much of our own output to keep for matching (the engine's scrollback is 64 KiB). */
export const RECEIVED_TAIL_BYTES = 128 * 1024;

/**
 * The bytes of `replay` that come after the end of `received`, or null when the two do not overlap
 * (more was missed than the engine kept). With periodic output (`yes`) the longest overlap may
 * stand for fewer missed lines than there were; the screen looks the same either way.
 */
export function missedOutput(received: Uint8Array, replay: Uint8Array): Uint8Array | null {
  if (replay.length === 0) return replay;
  if (received.length === 0) return null;
  // Failure function of the replay, then run the received tail through it.
  const fail = new Int32Array(replay.length);
  for (let i = 1, k = 0; i < replay.length; i++) {
    while (k > 0 && replay[i] !== replay[k]) k = fail[k - 1]!;
    if (replay[i] === replay[k]) k++;
    fail[i] = k;
  }
  let k = 0;
  const from = Math.max(0, received.length - replay.length);
  for (let i = from; i < received.length; i++) {
    while (k > 0 && (k === replay.length || received[i] !== replay[k])) k = fail[k - 1]!;
    if (received[i] === replay[k]) k++;
  }
  return k === 0 ? null : replay.subarray(k);
}

/** Keeps the last `cap` bytes of a byte stream. */
export class TailBuffer {
  private buf: Uint8Array;
  private size = 0;
  constructor(private readonly cap = RECEIVED_TAIL_BYTES) {
    this.buf = new Uint8Array(cap * 2);
  }
  push(chunk: Uint8Array): void {
    if (chunk.length >= this.cap) {
      this.buf.set(chunk.subarray(chunk.length - this.cap), 0);
      this.size = this.cap;
      return;
    }
    if (this.size + chunk.length > this.buf.length) {
      const keep = this.cap - chunk.length;
      this.buf.copyWithin(0, this.size - keep, this.size);
      this.size = keep;
    }
    this.buf.set(chunk, this.size);
    this.size += chunk.length;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(Math.max(0, this.size - this.cap), this.size);
  }
  get length(): number {
    return Math.min(this.size, this.cap);
  }
}
