import java.util.concurrent.locks.ReentrantLock;

/** No java.util.concurrent lock class is loaded at main's first line; then "waiter" parks on a ReentrantLock
 * main holds. */
public class LateLock {
    public static void main(String[] args) throws Exception {
        System.out.println("no lock yet"); // before any lock
        ReentrantLock gate = new ReentrantLock();
        gate.lock();
        Thread waiter = new Thread(gate::lock, "waiter");
        waiter.setDaemon(true);
        waiter.start();
        while (!gate.hasQueuedThreads()) {
            Thread.sleep(5);
        }
        System.out.println("waiter parked"); // waiter parked
    }
}
