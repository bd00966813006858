// Upstream's render cadence without a poll: output news (an `onOutput` call) renders
// at once if the last render is at least `intervalMs` old, else one one-shot timer
// renders when it will be. News while that timer is pending adds nothing: the render
// reads the job's state as it is then. A job with no news costs no timer at all.
import { performance } from 'node:perf_hooks';

export class RenderPacer {
  /**
   * The job's start counts as a render, so output in its first interval waits for the
   * timer, as upstream's first render does: a quick command gets only its final render.
   */
  private last = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly render: () => void,
  ) {}

  /** The job has new output. */
  news(): void {
    if (this.timer) return;
    const wait = this.last + this.intervalMs - performance.now();
    if (wait <= 0) {
      this.fire();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, wait);
  }

  /** No more renders from news (the final render is the caller's). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fire(): void {
    this.last = performance.now();
    this.render();
  }
}
