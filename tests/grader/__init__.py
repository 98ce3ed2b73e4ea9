"""make grade's parts, by job (tests/grade.py is the command that puts them together):
common (settings, rules, running a program under limits), sandbox (bubblewrap), submission (one
file's checks, gates and points), checks (the four checks and the repository's references),
report (what the class, the teacher and each student read)."""
