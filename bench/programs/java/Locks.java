import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/** Threads stuck on locks, for bench/java_locks.py: args[0] threads in all — a monitor deadlock and a
 * ReentrantLock deadlock (two threads each), a quarter of the rest blocked entering a monitor one thread holds,
 * a quarter parked on a ReentrantLock one thread holds, a quarter in Object.wait(), the rest parked on a latch.
 * Main then ticks forever: a breakpoint in tick() stops it afresh at each continue. */
public class Locks {
    static final Object LEFT = new Object(), RIGHT = new Object(), HELD = new Object(), MAILBOX = new Object();
    static final ReentrantLock FIRST = new ReentrantLock(), SECOND = new ReentrantLock(), TAKEN = new ReentrantLock();
    static final CountDownLatch GATE = new CountDownLatch(1);

    interface Body {
        void run() throws InterruptedException;
    }

    static Thread start(String name, Body body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (InterruptedException e) {
                // not interrupted
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    static void monitors(Object mine, Object theirs, CountDownLatch both) throws InterruptedException {
        synchronized (mine) {
            both.countDown();
            both.await();
            synchronized (theirs) {
                GATE.await();
            }
        }
    }

    static void locks(ReentrantLock mine, ReentrantLock theirs, CountDownLatch both) throws InterruptedException {
        mine.lock();
        both.countDown();
        both.await();
        theirs.lock();
    }

    static void tick(int round) throws InterruptedException {
        Thread.sleep(1); // tick
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        CountDownLatch monitorsHeld = new CountDownLatch(2), locksHeld = new CountDownLatch(2);
        CountDownLatch holding = new CountDownLatch(2);
        start("left", () -> monitors(LEFT, RIGHT, monitorsHeld));
        start("right", () -> monitors(RIGHT, LEFT, monitorsHeld));
        start("first", () -> locks(FIRST, SECOND, locksHeld));
        start("second", () -> locks(SECOND, FIRST, locksHeld));
        start("monitor-holder", () -> {
            synchronized (HELD) {
                holding.countDown();
                GATE.await();
            }
        });
        start("lock-holder", () -> {
            TAKEN.lock();
            holding.countDown();
            GATE.await();
        });
        holding.await();
        int rest = Math.max(0, count - 6);
        Thread[] stuck = new Thread[rest];
        for (int i = 0; i < rest; i++) {
            switch (i % 4) {
                case 0: stuck[i] = start("entering-" + i, () -> { synchronized (HELD) { GATE.await(); } }); break;
                case 1: stuck[i] = start("locking-" + i, TAKEN::lock); break;
                case 2: stuck[i] = start("waiting-" + i, () -> { synchronized (MAILBOX) { MAILBOX.wait(); } }); break;
                default: stuck[i] = start("gated-" + i, GATE::await); break;
            }
        }
        for (Thread thread : stuck) {
            while (thread.getState() != Thread.State.BLOCKED && thread.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
        }
        while (FIRST.getQueueLength() + SECOND.getQueueLength() < 2) {
            Thread.sleep(1);
        }
        System.out.println("all stuck");
        for (int round = 0; ; round++) {
            tick(round);
        }
    }
}
