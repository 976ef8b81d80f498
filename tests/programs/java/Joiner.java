public class Joiner {
    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> {
            long spins = 0;
            while (spins >= 0) { // busy loop
                spins++; // busy worker
            }
        }, "busy-worker");
        worker.start();
        worker.join(); // main waits
    }
}
