import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class Workers {
    static final Object LOCK = new Object();
    static final Object HELD = new Object();

    static int work(int seed) {
        int doubled = seed * 2;
        return doubled + 1; // worker breakpoint
    }

    static Thread start(String name, Runnable body, Thread.State settled) throws InterruptedException {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
        while (thread.getState() != settled) {
            Thread.sleep(5);
        }
        return thread;
    }

    public static void main(String[] args) throws Exception {
        start("sleeper", () -> {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                // not interrupted
            }
        }, Thread.State.TIMED_WAITING);
        start("waiter", () -> {
            synchronized (LOCK) {
                try {
                    LOCK.wait();
                } catch (InterruptedException e) {
                    // not interrupted
                }
            }
        }, Thread.State.WAITING);
        start("holder", () -> {
            synchronized (HELD) {
                try {
                    Thread.sleep(600_000);
                } catch (InterruptedException e) {
                    // not interrupted
                }
            }
        }, Thread.State.TIMED_WAITING);
        start("blocked", () -> {
            synchronized (HELD) { // blocked here
                System.out.println("never");
            }
        }, Thread.State.BLOCKED);
        Thread main = Thread.currentThread();
        Thread worker = new Thread(() -> {
            while (main.getState() != Thread.State.WAITING) { // main is in join() first
                Thread.onSpinWait();
            }
            int local = 20;
            int got = work(local); // in the worker thread
            System.out.println("worker got " + got);
        }, "worker-1");
        worker.start();
        worker.join();
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "pool-worker"));
        Future<Integer> result = pool.submit(() -> {
            int pooled = 5;
            return work(pooled); // in the pool
        });
        int fromPool = result.get();
        pool.shutdown();
        System.out.println("main done " + fromPool); // main breakpoint
    }
}
