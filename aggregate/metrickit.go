package aggregate

import (
	"fmt"

	"github.com/stackimage/stackimage/dump"

	"github.com/stackimage/stackimage/metrickit"
)

// MaxMetricKitFrames bounds the frames of the records made from one
// MetricKit input: each record repeats the path from its frame to the
// root, so a deep tree whose every frame has samples of its own would
// otherwise cost its frames times its depth.
const MaxMetricKitFrames = 1 << 22

// MetricKitRecords turns a MetricKit input's diagnostics into records.
// A crash diagnostic counts as a crash report does: each call stack's
// innermost frame (each leaf, should a stack branch) is one record of
// weight 1. Any other diagnostic is a call tree with sample counts, read
// as HangRecords reads a sample's: one record per frame that was on top
// of the stack in some samples, its stack the path from it to its root,
// its weight those samples (its sampleCount less its subFrames'; a leaf
// without a sampleCount counts 1). Each record is labelled with the
// diagnostic's kind ("diagnostic") and every field of its metadata under
// the field's own name ("hangDuration", "exceptionType"), after labels,
// which win; osVersion, deviceType and the app's version are also its
// attributes, timeStampEnd its timestamp. The error says what was left
// out past MaxMetricKitFrames.
func MetricKitRecords(in *metrickit.Input, labels map[string]string) ([]*Record, error) {
	recs, _, err := metricKitRecords(in, labels, ThreadsByInput)
	return recs, err
}

// metricKitRecords is MetricKitRecords for the given threads: a crash
// diagnostic counts its thread-attributed stack alone under
// ThreadsByInput, as other crash inputs count their crashed thread;
// warning is CrashedOnly's for a crash that names none.
func metricKitRecords(in *metrickit.Input, labels map[string]string, threads Threads) (recs []*Record, warning string, err error) {
	total := 0
	for pi := range in.Payloads {
		p := &in.Payloads[pi]
		for di := range p.Diagnostics {
			d := &p.Diagnostics[di]
			pl := in.Place(d)
			base := Record{Images: metricKitImages(pl), Device: d.MetadataValue("deviceType"),
				OSVersion: d.MetadataValue("osVersion"), AppVersion: d.AppVersion(),
				Timestamp: parseTime(p.TimeStampEnd), Labels: metricKitLabels(d, labels)}
			attributed := make([]bool, len(d.Tree.Stacks))
			for si := range d.Tree.Stacks {
				attributed[si] = d.Kind == metrickit.KindCrash && d.Tree.Stacks[si].ThreadAttributed
			}
			counting := dump.CountCrashedThread
			if d.Kind != metrickit.KindCrash {
				counting = dump.CountAllThreads
			}
			only, w := crashedOnly(counting, threads, attributed)
			if w != "" {
				warning = w
			}
			for si := range d.Tree.Stacks {
				st := &d.Tree.Stacks[si]
				if only && !attributed[si] {
					continue
				}
				weights := selfWeights(st.Frames, d.Kind == metrickit.KindCrash)
				for fi, w := range weights {
					if w == 0 {
						continue
					}
					var frames []uint64
					for p := int32(fi); p >= 0 && int(p) < len(st.Frames) && len(frames) < MaxFrames; p = st.Frames[p].Parent {
						if f := &st.Frames[p]; f.Has&(metrickit.HasAddress|metrickit.HasOffset) != 0 {
							frames = append(frames, metricKitAddress(pl, f))
						}
					}
					if len(frames) == 0 {
						continue
					}
					if total += len(frames); total > MaxMetricKitFrames {
						if err == nil {
							err = fmt.Errorf("aggregate: %s: stacks past %d frames in all left out", d.Path, MaxMetricKitFrames)
						}
						break
					}
					rec := base
					rec.Frames, rec.Weight = frames, int64(w)
					recs = append(recs, &rec)
				}
			}
		}
	}
	return recs, warning, err
}

// selfWeights returns each frame's own weight: for a crash, 1 for each
// leaf; otherwise its sampleCount less its children's (at least 0), and
// 1 for a leaf that gives no sampleCount.
func selfWeights(frames []metrickit.Frame, crash bool) []uint64 {
	w := make([]uint64, len(frames))
	children := make([]uint64, len(frames))
	hasChild := make([]bool, len(frames))
	for i := range frames {
		if p := frames[i].Parent; p >= 0 && int(p) < len(frames) {
			children[p] += frames[i].SampleCount
			hasChild[p] = true
		}
	}
	for i := range frames {
		switch {
		case crash:
			if !hasChild[i] {
				w[i] = 1
			}
		case !hasChild[i] && frames[i].Has&metrickit.HasSampleCount == 0:
			w[i] = 1
		case frames[i].SampleCount > children[i]:
			w[i] = frames[i].SampleCount - children[i]
		}
	}
	return w
}

// metricKitImages lists a diagnostic's images, the one loaded lowest
// marked as the main executable: MetricKit does not say which is, and
// dyld maps the main executable first, below its frameworks and the
// shared cache.
func metricKitImages(pl *metrickit.Placement) []Image {
	images := make([]Image, len(pl.Images))
	main := -1
	for i, im := range pl.Images {
		images[i] = Image{UUID: im.UUID, LoadAddress: Address(im.LoadAddress), Name: im.Name}
		if im.LoadAddress != 0 && (main < 0 || im.LoadAddress < pl.Images[main].LoadAddress) {
			main = i
		}
	}
	if main >= 0 {
		images[main].Main = true
	}
	return images
}

// metricKitAddress is a frame's address for a record: its image's load
// address plus its offset (what names it), else the address as written.
func metricKitAddress(pl *metrickit.Placement, f *metrickit.Frame) uint64 {
	image, address, offset := pl.Frame(f)
	if image < 0 {
		return address
	}
	return pl.Images[image].LoadAddress + offset
}

// metricKitLabels are a diagnostic's records' labels: labels, then its
// kind and metadata (those not empty), at most MaxLabels in all.
func metricKitLabels(d *metrickit.Diagnostic, labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+len(d.Metadata)+1)
	for k, v := range labels {
		out[k] = v
	}
	add := func(k, v string) {
		if _, ok := out[k]; !ok && v != "" && len(out) < MaxLabels {
			out[k] = v
		}
	}
	add("diagnostic", string(d.Kind))
	for _, f := range d.Metadata {
		add(f.Key, f.Value)
	}
	return out
}
