// Task status notifications of the Tasks extension (`io.modelcontextprotocol/tasks`,
// 2026-07-28): a client asks for them with `subscriptions/listen { notifications: {
// taskIds } }`; the server acknowledges with `notifications/subscriptions/acknowledged`
// naming the task ids it will report on, then sends `notifications/tasks`, each the
// whole task as `tasks/get` would answer it then, tagged with the listen request's id
// (`_meta["io.modelcontextprotocol/subscriptionId"]`). The subscription lasts until the
// client cancels the listen request (`notifications/cancelled`) or the connection ends.
//
// A task's state is its job's, read from the service when asked (shell-tasks.ts), and
// the service tells nobody when a job starts waiting for input, so each subscription
// reads its tasks every TASK_WATCH_MS and sends a notification when one's status or
// the prompts it asks change, never for a new output line (that is `statusMessage`,
// which `tasks/get` shows). A task that ended is reported once and no longer watched.
//
// What a subscription reaches is what `tasks/get` reaches: the task ids are checked as
// there (`shell-job-<handle>` of this server's service), and nothing else is honoured.
import { handleOf, type DetailedTask, type ShellTasks, TaskError } from './shell-tasks.js';

/** How often a subscription reads its tasks (a poll of the service, as `tasks/get` is). */
export const TASK_WATCH_MS = 250;
/** Most live subscriptions on one connection, and task ids in one: a bound, not a quota. */
const MAX_SUBSCRIPTIONS = 32;
const MAX_TASK_IDS = 256;

const SUBSCRIPTION_META = 'io.modelcontextprotocol/subscriptionId';
/** The revision's code for a request that needs a capability the client did not declare. */
const MISSING_CAPABILITY = -32021;

type Json = Record<string, unknown>;
export type RequestId = string | number;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** What a notification tells of a task: a new one goes out when this changes. */
function fingerprint(task: DetailedTask): string {
  return `${task.status}:${Object.keys(task.inputRequests ?? {}).sort().join(',')}`;
}

function terminal(task: DetailedTask): boolean {
  return task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled';
}

interface Subscription {
  /** Per task id: what was last sent of it; absent until the first notification. */
  sent: Map<string, string | undefined>;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

export class TaskSubscriptions {
  private readonly live = new Map<RequestId, Subscription>();

  constructor(
    private readonly tasks: ShellTasks,
    /**
     * Sends a message to the client: a notification, or the listen request's final
     * result, each belonging to the listen request `listenId` (over Streamable HTTP, the
     * listen POST's own stream carries them).
     */
    private readonly send: (message: Json, listenId: RequestId) => Promise<void>,
    private readonly watchMs = TASK_WATCH_MS,
  ) {}

  /**
   * Starts the subscription a `subscriptions/listen` request asks for. `declaresTasks`:
   * the request's client capabilities name the extension (the spec requires it for
   * `taskIds`). Returns the JSON-RPC error to answer with, or undefined once the
   * acknowledgement is sent (the request's own answer comes when it ends).
   */
  async listen(id: RequestId, params: Json, declaresTasks: boolean): Promise<Json | undefined> {
    const filter = params.notifications;
    if (!isObject(filter)) return { code: -32602, message: 'subscriptions/listen needs params.notifications, an object' };
    const asked = filter.taskIds;
    if (asked !== undefined && (!Array.isArray(asked) || asked.length > MAX_TASK_IDS || !asked.every((t) => typeof t === 'string'))) {
      return { code: -32602, message: `notifications.taskIds must be an array of at most ${MAX_TASK_IDS} task ids` };
    }
    // Only task notifications are served. A listen for anything else (list changes, which
    // an SDK client may open by itself at connect) is refused as before this was served,
    // rather than acknowledged with nothing honoured and a stream held open for nothing.
    if (asked === undefined) {
      return { code: -32601, message: 'subscriptions/listen serves task status notifications only (notifications.taskIds); list changes are not served this way' };
    }
    if (!declaresTasks) {
      return {
        code: MISSING_CAPABILITY,
        message: 'Missing required client capability',
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      };
    }
    if (this.live.has(id)) return { code: -32600, message: `a subscription with id ${JSON.stringify(id)} is already open` };
    if (this.live.size >= MAX_SUBSCRIPTIONS) return { code: -32602, message: `at most ${MAX_SUBSCRIPTIONS} subscriptions at once` };
    // Only what can name a task is honoured; everything else the filter asks is not
    // served here (list changes come unasked on stdio) and is left out of the answer.
    const taskIds = [...new Set((asked ?? []) as string[])].filter((t) => handleOf(t) !== null);
    const subscription: Subscription = { sent: new Map(taskIds.map((t) => [t, undefined])), timer: undefined, stopped: false };
    this.live.set(id, subscription);
    await this.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_META]: id }, notifications: { taskIds } },
    }, id);
    void this.watch(id, subscription);
    return undefined;
  }

  /** Ends the subscription a `notifications/cancelled` names; false: it names none. */
  cancel(requestId: unknown): boolean {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return false;
    const subscription = this.live.get(requestId);
    if (!subscription) return false;
    this.stop(requestId, subscription);
    return true;
  }

  /**
   * Ends every subscription. `graceful`: the connection stays open a moment (the server
   * is shutting down), so each listen request gets its empty result, the spec's sign
   * of an end the server chose.
   */
  async closeAll(graceful: boolean): Promise<void> {
    const ids = [...this.live.keys()];
    for (const id of ids) {
      const subscription = this.live.get(id);
      if (subscription) this.stop(id, subscription);
      if (graceful) await this.send({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_META]: id } } }, id).catch(() => {});
    }
  }

  private stop(id: RequestId, subscription: Subscription): void {
    subscription.stopped = true;
    if (subscription.timer) clearTimeout(subscription.timer);
    this.live.delete(id);
  }

  /** One round over the subscription's tasks, then the next after `watchMs`. */
  private async watch(id: RequestId, subscription: Subscription): Promise<void> {
    for (const [taskId, last] of subscription.sent) {
      if (subscription.stopped) return;
      let task: DetailedTask;
      try {
        task = await this.tasks.get(taskId);
      } catch (e) {
        // A task id that names no job (never, or no more): nothing to tell of it.
        if (e instanceof TaskError) subscription.sent.delete(taskId);
        continue;
      }
      const now = fingerprint(task);
      if (now === last || subscription.stopped) continue;
      subscription.sent.set(taskId, now);
      await this.send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: { [SUBSCRIPTION_META]: id } } }, id).catch(() => {});
      // An ended task does not change again.
      if (terminal(task)) subscription.sent.delete(taskId);
    }
    if (subscription.stopped) return;
    subscription.timer = setTimeout(() => void this.watch(id, subscription), this.watchMs);
    // The watch never keeps the server up by itself: the connection's end ends it.
    subscription.timer.unref();
  }
}
