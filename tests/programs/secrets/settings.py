"""Secrets in a dict, an object's fields, a URL, output and a traced call (tests/integration/test_secrets.py).
The secrets' literals are far from the lines tests stop at, so a stop's source excerpt does not show them."""


class Settings:
    def __init__(self) -> None:
        self.user = "bob"
        self.password = "hunter2-py-field"
        self.author = "Ada"  # not a secret: an ordinary word


def log(attempt: int) -> None:
    print(f"attempt {attempt} password=hunter2-py-output")


def connect(user: str, password: str) -> str:
    return f"{user}@db"


def main() -> None:
    settings = Settings()
    config = {"user": "bob", "password": "hunter2-py-dict", "api_key": "plain-key-value-1"}
    db_url = "postgres://bob:pg-url-secret@db:5432/app"
    github = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    commit = "da39a3ee5e6b4b0d3255bfef95601890afd80709"  # a git sha: not a secret
    # (the literals above stay out of the excerpt around the lines below)
    #
    for attempt in range(2):
        connect(settings.user, settings.password)
        log(attempt)
    print(db_url, github, commit, config["user"])  # stop here
    raise ConnectionError(f"cannot reach {db_url} with {github}")


if __name__ == "__main__":
    main()
