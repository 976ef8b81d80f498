public class Uncaught {
    static void fail(String what) {
        int depth = 2;
        throw new IllegalArgumentException("bad input: " + what + " ü"); // throws
    }

    static void call(String what) {
        fail(what);
    }

    public static void main(String[] args) {
        System.out.println("before");
        call("xyz");
    }
}
