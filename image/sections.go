package image

import "fmt"

// Section returns the named section of the named segment
// ("__TEXT", "__unwind_info"), and false when the image has none. In an
// object file, whose sections all sit in one unnamed segment, the segment
// name is matched against the section's own segment name.
func (im *Image) Section(segment, name string) (Section, bool) {
	for _, s := range im.Sections {
		if s.Segment == segment && s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// ReadSection returns a section's file bytes. A section without file data
// (zero-fill, or any section of a dSYM's __TEXT) is an error, as is one
// that runs past the end of the file.
func (im *Image) ReadSection(s Section) ([]byte, error) {
	if s.Flags&0xff == 0x1 { // S_ZEROFILL
		return nil, im.wrap(fmt.Errorf("section %s,%s has no file data (zero-fill)", s.Segment, s.Name))
	}
	if s.Offset == 0 && s.Size > 0 && im.Type != TypeObject {
		return nil, im.wrap(fmt.Errorf("section %s,%s has no file data", s.Segment, s.Name))
	}
	data, err := im.src.read(uint64(s.Offset), s.Size, fmt.Sprintf("section %s,%s", s.Segment, s.Name), 0)
	if err != nil {
		return nil, im.wrap(err)
	}
	return data, nil
}
