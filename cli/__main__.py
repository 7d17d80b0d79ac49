from qbo.cli.app import entry

entry()
