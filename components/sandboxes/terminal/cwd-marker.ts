// Line mode remembers `cd` by running every command as
//   <command>
//   __baton_s=$?; printf '\036BATON:<nonce>:%s\036' "$PWD"; exit $__baton_s
// and taking the marker back out of stdout as it streams past. The nonce makes the marker
// impossible to produce by accident; the exit status is the command's own.

const RS = "\x1e";

export function markerStart(nonce: string): string {
  return `${RS}BATON:${nonce}:`;
}

/** The command line line mode sends: the user's command, then the marker with the final $PWD. */
export function wrapCommand(command: string, nonce: string): string {
  return `${command}\n__baton_s=$?; printf '\\036BATON:${nonce}:%s\\036' "$PWD"; exit $__baton_s`;
}

/** How many characters at the end of `text` could begin `token` (held back until the next chunk). */
function partialTail(text: string, token: string): number {
  for (let n = Math.min(token.length - 1, text.length); n > 0; n--) {
    if (token.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/** A streaming filter over stdout text: passes everything but the marker, and keeps the cwd it carried. */
export class CwdMarkerFilter {
  private readonly start: string;
  private pending = "";
  private inMarker = false;
  private captured = "";
  /** The directory the command ended in, once its marker went past. */
  cwd: string | null = null;

  constructor(nonce: string) {
    this.start = markerStart(nonce);
  }

  /** The visible part of `chunk` (some characters may be held back until the next push). */
  push(chunk: string): string {
    let text = this.pending + chunk;
    this.pending = "";
    let out = "";
    for (;;) {
      if (this.inMarker) {
        const end = text.indexOf(RS);
        if (end < 0) {
          this.captured += text;
          return out;
        }
        this.cwd = this.captured + text.slice(0, end);
        this.captured = "";
        this.inMarker = false;
        text = text.slice(end + 1);
        continue;
      }
      const at = text.indexOf(this.start);
      if (at >= 0) {
        out += text.slice(0, at);
        text = text.slice(at + this.start.length);
        this.inMarker = true;
        continue;
      }
      const keep = partialTail(text, this.start);
      this.pending = text.slice(text.length - keep);
      return out + text.slice(0, text.length - keep);
    }
  }

  /** Whatever was held back, at the end of the stream (a marker cut short is shown as it was). */
  flush(): string {
    const rest = this.pending + (this.inMarker ? this.start + this.captured : "");
    this.pending = "";
    this.captured = "";
    this.inMarker = false;
    return rest;
  }
}
