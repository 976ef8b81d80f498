import java.util.concurrent.CountDownLatch;

/** Threads parked on a latch, for bench/java_threads.py: args[0] is how many. */
public class Many {
    static void park(CountDownLatch gate) {
        try { gate.await(); } catch (InterruptedException e) { }
    }
    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(count);
        for (int i = 0; i < count; i++) {
            Thread t = new Thread(() -> { started.countDown(); park(gate); }, "w" + i);
            t.setDaemon(true);
            t.start();
        }
        started.await();
        System.out.println("all started"); // stop here
    }
}
