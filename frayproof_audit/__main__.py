from frayproof_audit.cli import main

main()
