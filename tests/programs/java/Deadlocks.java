import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/** Two deadlocks and threads that wait: "left"/"right" take two monitors in opposite orders, "first"/"second"
 * two ReentrantLocks, "mailman" waits in Object.wait() with a letter to deliver, "reader" for the read lock of
 * PAGES, whose write lock main holds, "postman" for a letter in a queue, inside a synchronized method. Main
 * waits until every one of them is stuck, then reaches its "all stuck" line and joins them (forever). */
public class Deadlocks {
    static final Object LEFT = new Object();
    static final Object RIGHT = new Object();
    static final Object MAILBOX = new Object();
    static final ReentrantLock FIRST = new ReentrantLock();
    static final ReentrantLock SECOND = new ReentrantLock();
    static final ReentrantReadWriteLock PAGES = new ReentrantReadWriteLock();

    static class PostOffice {
        final BlockingQueue<String> letters = new LinkedBlockingQueue<>();

        synchronized void collect() throws InterruptedException {
            letters.take(); // waits for a letter in the queue
        }
    }

    static void monitors(Object mine, Object theirs, CountDownLatch bothHold) throws InterruptedException {
        synchronized (mine) { // takes its own monitor
            bothHold.countDown();
            bothHold.await();
            synchronized (theirs) { // blocks on the other's monitor
                System.out.println("never");
            }
        }
    }

    static void locks(ReentrantLock mine, ReentrantLock theirs, CountDownLatch bothHold) throws InterruptedException {
        mine.lock(); // takes its own lock
        try {
            bothHold.countDown();
            bothHold.await();
            theirs.lock(); // blocks on the other's lock
            theirs.unlock();
        } finally {
            mine.unlock();
        }
    }

    static class Letter {
        String to = "nobody";
        int stamps = 2;
    }

    static void deliver(Letter letter) throws InterruptedException {
        String sender = "left";
        synchronized (MAILBOX) {
            MAILBOX.wait(); // waits for a letter
        }
        System.out.println(letter.to + sender);
    }

    static Thread start(String name, Callable body) {
        Thread thread = new Thread(() -> {
            try {
                body.call();
            } catch (InterruptedException e) {
                // not interrupted
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    interface Callable {
        void call() throws InterruptedException;
    }

    public static void main(String[] args) throws Exception {
        PAGES.writeLock().lock();
        PostOffice office = new PostOffice();
        CountDownLatch monitorsHeld = new CountDownLatch(2);
        CountDownLatch locksHeld = new CountDownLatch(2);
        Thread[] stuck = {
            start("left", () -> monitors(LEFT, RIGHT, monitorsHeld)),
            start("right", () -> monitors(RIGHT, LEFT, monitorsHeld)),
            start("first", () -> locks(FIRST, SECOND, locksHeld)),
            start("second", () -> locks(SECOND, FIRST, locksHeld)),
            start("mailman", () -> deliver(new Letter())),
            start("reader", () -> PAGES.readLock().lock()),
            start("postman", () -> office.collect()),
        };
        while (stuck[0].getState() != Thread.State.BLOCKED || stuck[1].getState() != Thread.State.BLOCKED
                || FIRST.getQueueLength() + SECOND.getQueueLength() < 2 || stuck[4].getState() != Thread.State.WAITING
                || !PAGES.hasQueuedThreads() || stuck[6].getState() != Thread.State.WAITING) {
            Thread.sleep(5);
        }
        System.out.println("all stuck"); // all stuck
        for (Thread thread : stuck) {
            thread.join();
        }
    }
}
