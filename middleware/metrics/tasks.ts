/**
 * Tasks in the metrics: a task a request made is running (`tasks_running{tool}`) until it ends, and its end is
 * counted by how it ended (`tasks_total{tool,outcome}`); a task a request found ended (a tasks/get that found its
 * worker gone) is only counted.
 * @see docs/middleware/metrics.md
 */
import type { TaskTrack } from '../../core/types.js';
import { LABEL_VALUES, type TallySet } from './definitions.js';

const OUTCOMES: ReadonlySet<string> = new Set(LABEL_VALUES.taskOutcome);

/**
 * The tracker of one instance. `label` turns the task's registered tool into a tool label (the instance's
 * bounded budget, or `other`), so the running counts are kept per label, in a map as bounded as the labels.
 */
export function taskTracker(
  tallies: Pick<TallySet, 'tasks' | 'tasksRunning'>,
  label: (tool: string | undefined) => string,
): (task: TaskTrack) => void {
  const running = new Map<string, number>();
  const add = (tool: string, delta: number): void => {
    const n = (running.get(tool) ?? 0) + delta;
    running.set(tool, n);
    tallies.tasksRunning.one(tool).set(n);
  };
  return (task) => {
    const tool = label(task.tool);
    const wasRunning = task.ended === undefined;
    if (wasRunning) add(tool, 1);
    task.onEnd((end) => {
      if (wasRunning) add(tool, -1);
      if (end.elsewhere !== true && OUTCOMES.has(end.outcome)) tallies.tasks.two(tool, end.outcome).inc();
    });
  };
}
