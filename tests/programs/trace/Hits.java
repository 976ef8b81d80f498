// Counts to N (the first argument, default 20000) for trace tests: each turn passes the loop body once.

public class Hits {
    public static void main(String[] args) {
        long n = args.length > 0 ? Long.parseLong(args[0]) : 20000;
        long total = 0; // before the loop
        for (long i = 0; i < n; i++) {
            total += i; // loop body
            // a comment in the loop
        }
        System.out.println("total " + total); // after the loop
    }
}
