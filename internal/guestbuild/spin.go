package guestbuild

// SpinningStart is a hand-assembled command module without a description
// section whose _start spins: a describe run of it lasts until the
// describe deadline, and the module is then refused. Tests use it to hold
// up a load.
func SpinningStart() []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, 1, 0x60, 0, 0)...) // type: () -> ()
	m = append(m, sec(3, 1, 0)...)          // function 0: type 0
	m = append(m, sec(5, 1, 0, 1)...)       // memory: min 1
	m = append(m, sec(7, 2,
		6, '_', 's', 't', 'a', 'r', 't', 0x00, 0,
		6, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0)...)
	body := []byte{0, 0x03, 0x40, 0x0C, 0, 0x0B, 0x0B} // loop; br 0; end; end
	m = append(m, sec(10, append([]byte{1, byte(len(body))}, body...)...)...)
	return m
}
