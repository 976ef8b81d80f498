/** Reload's target: a loop calling a method an edit fixes while the program is stopped inside it. */
public class Tally {
    private int calls = 0;

    int score(int round) {
        calls++;
        int points = round * 10; // score
        return points;
    }

    public static void main(String[] args) {
        Tally tally = new Tally();
        for (int round = 1; round <= 4; round++) {
            int points = tally.score(round);
            System.out.println("round " + round + ": " + points);
        }
        System.out.println("calls " + tally.calls);
    }
}
