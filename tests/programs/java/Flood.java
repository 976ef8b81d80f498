import java.io.BufferedOutputStream;
import java.io.PrintStream;

public class Flood {
    public static void main(String[] args) {
        long megabytes = args.length > 0 ? Long.parseLong(args[0]) : 100;
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false);
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < 1023; i++) {
            line.append((char) ('a' + i % 26));
        }
        String text = line.toString();
        long lines = megabytes * 1024;
        for (long i = 0; i < lines; i++) {
            out.println(text);
        }
        out.println("flood done");
        out.flush();
        System.err.println("flood stderr end");
    }
}
