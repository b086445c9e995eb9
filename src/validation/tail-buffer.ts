/** Keeps only the last `cap` bytes of a stream: memory stays bounded whatever the stream's size. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private held = 0;
  total = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (chunk.length >= this.cap) {
      this.chunks = [chunk.subarray(chunk.length - this.cap)];
      this.held = this.cap;
      return;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
    // Compact when holding twice the cap, so memory is at most about 2 x cap.
    if (this.held > 2 * this.cap) {
      const all = Buffer.concat(this.chunks);
      const kept = Buffer.from(all.subarray(all.length - this.cap));
      this.chunks = [kept];
      this.held = kept.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.cap)).toString('utf8');
  }
}
