from lmrl_tui.cli import main

raise SystemExit(main())
