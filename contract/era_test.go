package contract

import (
	"encoding/json"
	"testing"
)

// A task record keeps its era as the text it always had ("legacy",
// "modern"), so records written before Era was one type still read, and
// replicas of either build read each other's.
func TestEraText(t *testing.T) {
	var rec struct {
		Era Era `json:"era"`
	}
	for _, c := range []struct {
		era  Era
		text string
	}{{Legacy, `{"era":"legacy"}`}, {Modern, `{"era":"modern"}`}} {
		rec.Era = c.era
		b, err := json.Marshal(rec)
		if err != nil || string(b) != c.text {
			t.Errorf("%v encodes as %s %v, want %s", c.era, b, err, c.text)
		}
		rec.Era = 7
		if err := json.Unmarshal([]byte(c.text), &rec); err != nil || rec.Era != c.era {
			t.Errorf("%s decodes as %v %v", c.text, rec.Era, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"era":"future"}`), &rec); err == nil {
		t.Error("an unknown era decodes")
	}
	if _, err := json.Marshal(struct{ E Era }{E: 9}); err == nil {
		t.Error("an unknown era encodes")
	}
}
