package guest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func schemaString(t *testing.T, s *Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type inner struct {
	X int `json:"x"`
}

type Embedded struct {
	E string `json:"e"`
	N string `json:"n"`
}

type kitchenSink struct {
	Embedded
	N        int               `json:"n" jsonschema:"description=Shadows the embedded n"`
	Name     string            `json:"name" jsonschema:"description=A name, with commas, in it,minLength=1"`
	Mode     string            `json:"mode,omitempty" jsonschema:"enum=fast|slow,default=fast"`
	Count    uint8             `json:"count"`
	Ratio    float64           `json:"ratio" jsonschema:"minimum=0,maximum=1,exclusiveMaximum=2"`
	Flag     bool              `json:"flag" jsonschema:"default=true"`
	Opt      *int              `json:"opt"`
	Tags     []string          `json:"tags" jsonschema:"enum=a|b,maxItems=3"`
	Grid     [2]int            `json:"grid"`
	Labels   map[string]string `json:"labels,omitzero"`
	Nested   inner             `json:"nested"`
	Any      any               `json:"any"`
	Raw      json.RawMessage   `json:"raw"`
	Bytes    []byte            `json:"bytes"`
	When     time.Time         `json:"when"`
	Quoted   int64             `json:"quoted,string"`
	Forced   *string           `json:"forced" jsonschema:"required"`
	Loose    string            `json:"loose" jsonschema:"optional,pattern=^[a-z]+$"`
	Skipped  string            `json:"-"`
	private  string
	NoTag    string
	Override string `json:"override,omitempty" jsonschema:"title=T,format=email"`
}

func TestSchemaForStruct(t *testing.T) {
	got := schemaString(t, SchemaFor(reflect.TypeFor[kitchenSink]()))
	want := `{"type":"object","properties":{` +
		`"n":{"type":"integer","description":"Shadows the embedded n"},` +
		`"name":{"type":"string","description":"A name, with commas, in it","minLength":1},` +
		`"mode":{"type":"string","enum":["fast","slow"],"default":"fast"},` +
		`"count":{"type":"integer","minimum":0},` +
		`"ratio":{"type":"number","minimum":0,"maximum":1,"exclusiveMaximum":2},` +
		`"flag":{"type":"boolean","default":true},` +
		`"opt":{"type":"integer"},` +
		`"tags":{"type":"array","maxItems":3,"items":{"type":"string","enum":["a","b"]}},` +
		`"grid":{"type":"array","minItems":2,"maxItems":2,"items":{"type":"integer"}},` +
		`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"nested":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},` +
		`"any":{},"raw":{},` +
		`"bytes":{"type":"string","contentEncoding":"base64"},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"quoted":{"type":"string"},` +
		`"forced":{"type":"string"},` +
		`"loose":{"type":"string","pattern":"^[a-z]+$"},` +
		`"NoTag":{"type":"string"},` +
		`"override":{"type":"string","title":"T","format":"email"},` +
		`"e":{"type":"string"}},` +
		`"required":["n","name","count","ratio","flag","tags","grid","nested","any","raw","bytes","when","quoted","forced","NoTag","e"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

type outShape struct {
	List   []int          `json:"list"`
	Maybe  *inner         `json:"maybe"`
	Opt    []int          `json:"opt,omitempty"`
	OptPtr *inner         `json:"optPtr,omitempty"`
	M      map[string]int `json:"m"`
	S      string         `json:"s"`
}

func TestOutputSchemaNullable(t *testing.T) {
	r := &reflector{output: true, seen: map[reflect.Type]bool{}}
	got := schemaString(t, r.schema(reflect.TypeFor[outShape]()))
	want := `{"type":"object","properties":{` +
		`"list":{"type":["array","null"],"items":{"type":"integer"}},` +
		`"maybe":{"type":["object","null"],"properties":{"x":{"type":"integer"}},"required":["x"]},` +
		`"opt":{"type":"array","items":{"type":"integer"}},` +
		`"optPtr":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},` +
		`"m":{"type":["object","null"],"additionalProperties":{"type":"integer"}},` +
		`"s":{"type":"string"}},"required":["list","m","s"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

type node struct {
	Value    int     `json:"value"`
	Children []*node `json:"children,omitempty"`
}

func TestSchemaRecursive(t *testing.T) {
	got := schemaString(t, SchemaFor(reflect.TypeFor[node]()))
	want := `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"type":"object"}}},"required":["value"]}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestSchemaEmptyStruct(t *testing.T) {
	if got := schemaString(t, SchemaFor(reflect.TypeFor[struct{}]())); got != `{"type":"object","properties":{}}` {
		t.Errorf("got %s", got)
	}
}

func TestSchemaTagErrors(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			A int `jsonschema:"bogus=1"`
		}](), `unknown jsonschema tag key "bogus"`},
		{reflect.TypeFor[struct {
			A int `jsonschema:"enum=1|x"`
		}](), `enum value "x"`},
		{reflect.TypeFor[struct {
			A int `jsonschema:"minimum=low"`
		}](), `minimum "low" is not a number`},
		{reflect.TypeFor[struct {
			A int `jsonschema:"description"`
		}](), `needs a value`},
		{reflect.TypeFor[struct{ C chan int }](), `cannot describe type chan int`},
		{reflect.TypeFor[struct{ M map[[2]int]int }](), `cannot describe map`},
	}
	for _, c := range cases {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("%v: panic %v, want %q", c.typ, r, c.want)
				}
			}()
			SchemaFor(c.typ)
		}()
	}
}

func TestSplitTag(t *testing.T) {
	got := splitTag("description=a, b,c=d,enum=x|y,required")
	want := []string{"description=a, b,c=d", "enum=x|y", "required"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
}
