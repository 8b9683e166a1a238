/** "Retrying in 8 s (attempt 3)." after `failures` failed attempts; its own module so the light notices share it. */
export function retryText(secondsLeft: number | null, failures: number): string {
  if (secondsLeft === null) return "Baton retries on its own.";
  return secondsLeft > 0 ? `Retrying in ${secondsLeft} s (attempt ${failures + 1}).` : "Retrying now…";
}
