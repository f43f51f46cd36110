package redact
import ("testing";"os";"path/filepath";"strings";"io/fs")
func TestY(t *testing.T){
 r:=&Redactor{}
 n:=0
 filepath.WalkDir("../fixtures", func(p string, d fs.DirEntry, err error) error{
  if d.IsDir() || strings.HasSuffix(p,".yaml") {return nil}
  b,_:=os.ReadFile(p); n++
  out,found,_:=r.Body(b)
  if string(out)!=string(b) { t.Errorf("%s: %v\n%s", p, found, out) }
  return nil})
 t.Log(n)
}
