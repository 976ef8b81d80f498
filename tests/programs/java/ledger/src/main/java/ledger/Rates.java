package ledger;

public final class Rates {
    private Rates() {}

    public static int fee(int round) {
        int fee = round * 10; // fee
        return fee;
    }
}
