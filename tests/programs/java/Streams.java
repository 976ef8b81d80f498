public class Streams {
    public static void main(String[] args) {
        System.out.println("to stdout: héllo");
        System.err.println("to stderr: wörld");
        System.out.flush();
        System.err.flush();
        System.out.println("stdout again"); // after output
    }
}
