// A lost update, the same every run: two threads each add 1 to a shared counter N times (the first argument,
// default 500), reading it, then both waiting at a barrier, then writing what each read plus one, so every
// increment of one thread overwrites the other's: the counter ends at N, not 2N. The same program is in race.py.
import java.util.concurrent.CyclicBarrier;

public class Race {
    static int counter = 0;

    static void work(int rounds, CyclicBarrier barrier) {
        try {
            for (int i = 0; i < rounds; i++) {
                int seen = counter;
                barrier.await(); // both have read the counter
                counter = seen + 1; // the write
                barrier.await(); // both have written it
            }
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        CyclicBarrier barrier = new CyclicBarrier(2); // before the threads
        Thread[] workers = {new Thread(() -> work(rounds, barrier), "adder-1"),
                            new Thread(() -> work(rounds, barrier), "adder-2")};
        for (Thread worker : workers) {
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        System.out.println("counter " + counter + " of " + 2 * rounds); // after the threads
    }
}
