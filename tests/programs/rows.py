"""Query results as sqlite3.Row objects (row_factory), read at a breakpoint."""
import sqlite3

con = sqlite3.connect(":memory:")
con.row_factory = sqlite3.Row
con.execute("create table fruit (id integer, name text, price real)")
con.executemany("insert into fruit values (?, ?, ?)", [(1, "pear", 1.5), (2, "fig", 2.25)])
row = con.execute("select * from fruit order by id").fetchone()
rows = con.execute("select * from fruit order by id").fetchall()
print(row["name"])  # read the row
