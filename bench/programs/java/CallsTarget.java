// The call-trace bench's Java program: work called N times in a loop, after a line to stop at first.
public class CallsTarget {
    static int work(int i) {
        return i * 2; // body
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        long total = 0; // start
        for (int i = 0; i < n; i++) {
            total += work(i);
        }
        System.out.println(total);
    }
}
