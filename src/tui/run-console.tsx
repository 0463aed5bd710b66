import { getPriority, setPriority } from 'node:os';
import { render } from 'ink';
import { ConsoleApp } from './components/ConsoleApp.js';
import type { ConsoleAppProps } from './components/ConsoleApp.js';

/** The console's own props, less what the terminal edge supplies (size, clock, quit wiring). */
export interface RunConsoleOptions extends Omit<ConsoleAppProps, 'onQuit' | 'size' | 'now'> {
  /**
   * What q / Ctrl-C do. Given `close` (which unmounts the console), the default just
   * closes; serve instead stops its router first and closes when it has exited.
   */
  onQuit?: (close: () => void) => void;
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
}

export interface RunningConsole {
  /** Unmount and restore the terminal; idempotent. */
  close(): void;
  /** Resolves once the console is gone and the terminal restored. */
  done: Promise<void>;
}

const ALT_SCREEN_ON = '\u001b[?1049h';
const ALT_SCREEN_OFF = '\u001b[?1049l';

/**
 * Draw the console on the terminal (the I/O edge: everything else is components and
 * hooks). It takes the alternate screen, so quitting gives the shell back as it was,
 * and restores it on every way out, including a crash (process 'exit'). Ink runs at
 * most 10 frames a second: the data changes a few times a second at most, and under
 * serve the router's child process must not compete with a busy parent. Ink 6.8's
 * incrementalRendering is left off: in tmux it left stale rows behind (lines drawn
 * twice, rows out of place) once a frame's lines changed length, whereas full redraws
 * of a frame under rows - 1 lines are clean and cost a few kB per frame.
 */
export function runConsole(o: RunConsoleOptions): RunningConsole {
  const stdout = o.stdout ?? process.stdout;
  // Drawing yields to routing: on a router's own machine (always, under serve, where the
  // router is our child and keeps its priority), a busy CPU goes to the router first.
  try {
    setPriority(Math.min(19, getPriority() + 10));
  } catch {
    // Not allowed here (some containers): the console still works, just unniced.
  }
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    stdout.write(ALT_SCREEN_OFF);
  };
  process.once('exit', restore);
  stdout.write(ALT_SCREEN_ON);
  let instance: ReturnType<typeof render> | undefined;
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    instance?.unmount();
  };
  const onQuit = (): void => (o.onQuit ? o.onQuit(close) : close());
  instance = render(
    <ConsoleApp
      feed={o.feed}
      child={o.child}
      onQuit={onQuit}
      color={o.color}
      title={o.title}
      target={o.target}
      intervalMs={o.intervalMs}
      blockSize={o.blockSize}
      {...(o.sort ? { sort: o.sort } : {})}
      {...(o.filter ? { filter: o.filter } : {})}
      {...(o.reverse ? { reverse: true } : {})}
    />,
    {
      stdout,
      ...(o.stdin ? { stdin: o.stdin } : {}),
      exitOnCtrlC: false,
      patchConsole: false,
      maxFps: 10,
    },
  );
  const done = instance.waitUntilExit().then(
    () => restore(),
    () => restore(),
  );
  return {
    close,
    done: done.finally(() => process.off('exit', restore)),
  };
}
