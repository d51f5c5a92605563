#!/opt/no-such-venv/bin/python
print("never runs")
