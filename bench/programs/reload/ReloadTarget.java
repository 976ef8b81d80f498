// The reload bench's Java program: a loop calling one method, a breakpoint in the loop.
public class ReloadTarget {
    static int price(int i) {
        return i * 2; // the function edited
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long total = 0;
        for (int i = 0; i < rounds; i++) {
            total += price(i); // the loop body
        }
        System.out.println("total " + total);
    }
}
