/** Many threads asleep at different depths and lines: the all-threads stack groups, cuts and pages them. */
public class Crowd {
    static void descend(int depth, int line) throws InterruptedException {
        if (depth > 0) {
            descend(depth - 1, line);
            return;
        }
        switch (line) { // asleep at one of ten lines
            case 0: Thread.sleep(600_000); break;
            case 1: Thread.sleep(600_000); break;
            case 2: Thread.sleep(600_000); break;
            case 3: Thread.sleep(600_000); break;
            case 4: Thread.sleep(600_000); break;
            case 5: Thread.sleep(600_000); break;
            case 6: Thread.sleep(600_000); break;
            case 7: Thread.sleep(600_000); break;
            case 8: Thread.sleep(600_000); break;
            default: Thread.sleep(600_000); break;
        }
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        int depths = Integer.parseInt(args[1]);
        Thread[] crowd = new Thread[count];
        for (int i = 0; i < count; i++) {
            int depth = i % depths;
            int line = i % 10;
            crowd[i] = new Thread(() -> {
                try {
                    descend(depth, line);
                } catch (InterruptedException e) {
                    // not interrupted
                }
            }, "crowd-" + i);
            crowd[i].setDaemon(true);
            crowd[i].start();
        }
        for (Thread thread : crowd) {
            while (thread.getState() != Thread.State.TIMED_WAITING) {
                Thread.onSpinWait();
            }
        }
        System.out.println("all asleep"); // all started
    }
}
