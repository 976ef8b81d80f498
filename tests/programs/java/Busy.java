public class Busy {
    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(() -> {
            long spins = 0;
            while (true) {
                spins++; // worker loop
                if (spins < 0) break;
            }
        }, "spinner");
        worker.setDaemon(true);
        worker.start();
        long counter = 0;
        while (counter >= 0) {
            counter++; // main loop
        }
    }
}
