"""``python -m bench.droidtask``: run DroidTask on replay phones and write its docs section."""

from bench.droidtask.report import main

main()
