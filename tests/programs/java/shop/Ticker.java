package shop;

/** Method breakpoints, field watchpoints, raw queries and attach (test_java_attach.py). */
public class Ticker {
    static int ticks = 0;
    static String label = "start";
    int count;
    final String name;

    Ticker(String name) {
        this.name = name; // constructor
    }

    static class Box {
        int value;

        void put(int v) {
            value = v; // box put
        }
    }

    void add(int n) {
        count += n; // add int
    }

    void add(String s) {
        count += s.length(); // add string
    }

    int read() {
        return count; // read count
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3; // start; -1: forever
        int pause = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        Ticker t = new Ticker("t1");
        Ticker other = new Ticker("t2");
        for (int i = 0; rounds < 0 || i < rounds; i++) {
            t.add(i);
            t.add("ab");
            other.add(100);
            Box box = new Box();
            box.put(i * 10);
            ticks++; // tick
            label = "tick " + i;
            if (t.read() < 0) {
                break;
            }
            if (pause > 0) {
                Thread.sleep(pause);
            }
        }
        System.out.println("count " + t.count + " ticks " + ticks + " " + label);
    }
}
