module github.com/stcsim/stcsim

go 1.26

require (
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/sarchlab/akita/v3 v3.1.0
	github.com/syifan/goseth v0.1.1
	github.com/tebeka/atexit v0.3.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.18.0
	gonum.org/v1/plot v0.17.0
	google.golang.org/protobuf v1.36.12
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/go-sql-driver/mysql v1.7.1 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/rs/xid v1.5.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
