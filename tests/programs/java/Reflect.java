import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.util.List;

/** Values that read as one thing (classes, boxes, enum constants, proxies) and class literals. */
public class Reflect {
    @Retention(RetentionPolicy.RUNTIME)
    @interface Named {
        String value();
    }

    static class User {
        static class Inner {
        }

        @Named("login")
        String name = "ann";
    }

    static final class Pair<A, B> {
        final A first;
        final B second;

        Pair(A first, B second) {
            this.first = first;
            this.second = second;
        }
    }

    interface Greeter {
        String greet(String who);
    }

    enum Color { RED, GREEN { @Override public String toString() { return "green"; } } }

    static final class Point {
        final int x;
        final int y;

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }
    }

    public static void main(String[] args) throws Exception {
        Class<?> kind = User.Inner.class;
        Class<?> primitive = int.class;
        Class<?> strings = String[].class;
        Greeter proxy = (Greeter) Proxy.newProxyInstance(Reflect.class.getClassLoader(), new Class<?>[] {Greeter.class},
                (self, method, arguments) -> "hi " + arguments[0]);
        Pair<String, Integer> pair = new Pair<>("pear", 3);
        Pair<Long, Double> numbers = new Pair<>(7L, 2.5);
        Pair<Color, Class<?>> odd = new Pair<>(Color.GREEN, Greeter.class);
        List<Point> points = List.of(new Point(1, 2), new Point(3, 4));
        Point[] corners = {new Point(0, 0)};
        Field field = User.class.getDeclaredField("name");
        System.out.println(kind + " " + primitive + strings + proxy.greet("bob") + pair.second + numbers.first
                + odd.first + points.size() + corners.length + field.getName()); // stop here
    }
}
