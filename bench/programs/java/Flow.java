/** The benchmark's Java debuggee: a breakpoint in square (the flow), then a loop for conditions. */
public class Flow {
    static int square(int n) {
        int result = n * n;
        return result; // in square
    }

    public static void main(String[] args) {
        int total = square(args.length > 0 ? Integer.parseInt(args[0]) : 3);
        int hits = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        for (int i = 0; i < hits; i++) {
            total += i; // in loop
        }
        System.out.println(total); // after loop
    }
}
