package ledger;

/** Reload's target laid out as a Maven project (classes built into target/classes, launched by class name): a loop
 *  calling a method of another file, and a class of a third file first loaded after the loop. */
public class Main {
    public static void main(String[] args) {
        int total = 0;
        for (int round = 1; round <= 3; round++) {
            int fee = Rates.fee(round);
            total += fee;
            System.out.println("round " + round + ": " + fee);
        }
        System.out.println(Summary.line(total));
    }
}
