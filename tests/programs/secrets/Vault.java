// Secrets in a Java object's fields (tests/integration/test_secrets.py).
public class Vault {
    private String user = "bob";
    private String password = "hunter2-java-field";
    private String authority = "ca.example";

    public static void main(String[] args) {
        Vault vault = new Vault();
        String jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        System.out.println(vault.user + " " + jwt.length());  // stop here
    }
}
