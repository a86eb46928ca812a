module example.com/goplugin

go 1.24
