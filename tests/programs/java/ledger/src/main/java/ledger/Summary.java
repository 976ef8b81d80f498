package ledger;

final class Summary {
    private Summary() {}

    static String line(int total) {
        String said = "total " + total; // summary
        return said;
    }
}
