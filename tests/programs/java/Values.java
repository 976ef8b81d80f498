public class Values {
    static class Base {
        static int created = 0;
        protected String baseName = "bäse";
        int baseCount = 7;
    }

    static class Derived extends Base {
        static final String KIND = "derived";
        private double weight = 2.5;
        char mark = 'Ω';

        String describe(int factor) {
            String label = baseName + factor; // instance method
            return label + weight;
        }
    }

    static int total = 42;
    static String greeting = "grüße ☕";

    public static void main(String[] args) {
        byte b = -7;
        short s = 1234;
        char c = 'é';
        char ascii = 'A';
        int i = -123456;
        long l = 9_000_000_000L;
        float f = 1.5f;
        double d = -0.25;
        boolean yes = true;
        String nothing = null;
        String text = "naïve ☃ 日本";
        Object empty = null; // primitives set
        int later = i + 1;
        Derived derived = new Derived();
        Base.created++;
        String said = derived.describe(3);
        System.out.println(said + later + b + s + c + ascii + l + f + d + yes + nothing + text + empty + total);
    }
}
