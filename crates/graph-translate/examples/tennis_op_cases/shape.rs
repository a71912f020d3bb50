//! Cases of the operators the exporter lowers in `tennis/slicing.rs` and
//! `resize.rs`: padding, slicing, cropping, resizing and normalisation.

use super::*;

pub(super) fn cases(v: &mut Vec<Case>) {
    let pads: [(&[usize], &[i32], f32); 4] = [
        (&[2, 3, 4, 5], &[0, 0, 0, 0, 1, 2, 2, 1], 0.0),
        (&[2, 3, 4, 5], &[0, 0, 1, 0, 0, 0, -1, 2], 1.5),
        (&[3, 6], &[1, 1, 2, -2], -1.0),
        (&[2, 3, 5], &[0, 0, 1, 2, -1, -1], 0.25),
    ];
    for (k, (d, p, val)) in pads.into_iter().enumerate() {
        v.push(case(
            &format!("pad_{k}"),
            "pad",
            vec![x(d), ci(p, &[d.len(), 2])],
            vec![("padding_value", P::F(val))],
        ));
    }
    // bounds and paddings computed at run time (module inputs)
    let fv = |v: &[f32], d: &[usize]| In::Xv(v.to_vec(), d.to_vec());
    v.push(case(
        "pad_dyn_0",
        "pad",
        vec![
            x(&[2, 3, 4, 5]),
            fv(&[0., 0., 1., -1., 2., 0., -1., 2.], &[4, 2]),
        ],
        vec![("padding_value", P::F(0.5))],
    ));
    v.push(case(
        "slice_v2_dyn_0",
        "slice_v2",
        vec![
            x(&[4, 5, 6]),
            fv(&[1., 0., 2.], &[3]),
            fv(&[2., -1., 3.], &[3]),
        ],
        vec![],
    ));
    v.push(case(
        "slice_v3_dyn_0",
        "slice_v3",
        vec![
            x(&[4, 5, 6]),
            fv(&[1., 1.], &[2]),
            fv(&[3., 100.], &[2]),
            ci(&[0, 2], &[2]),
            ci(&[1, 3], &[2]),
        ],
        vec![],
    ));
    let begin_size: [(&[usize], &[i32], &[i32]); 2] = [
        (&[4, 5, 6], &[1, 0, 2], &[2, -1, 3]),
        (&[3, 4], &[0, 1], &[3, 2]),
    ];
    for (k, (d, b, s)) in begin_size.into_iter().enumerate() {
        v.push(case(
            &format!("slice_{k}"),
            "slice",
            vec![x(d)],
            vec![("begin", iv(b)), ("size", iv(s))],
        ));
        v.push(case(
            &format!("slice_v2_{k}"),
            "slice_v2",
            vec![x(d), ci(b, &[b.len()]), ci(s, &[s.len()])],
            vec![],
        ));
    }
    type V3<'a> = (&'a [i32], &'a [i32], Option<&'a [i32]>, Option<&'a [i32]>);
    let v3: [V3; 4] = [
        (&[1, -4], &[3, 100], Some(&[0, 2]), None),
        (&[0, 5], &[3, 0], Some(&[1, 2]), Some(&[2, -2])),
        (&[1], &[-1], None, None),
        (&[-100, 1], &[2, 100], Some(&[0, 2]), Some(&[1, 3])),
    ];
    for (k, (st, en, ax, sp)) in v3.into_iter().enumerate() {
        let mut ins = vec![x(&[4, 5, 6]), ci(st, &[st.len()]), ci(en, &[en.len()])];
        if let Some(a) = ax {
            ins.push(ci(a, &[a.len()]));
        }
        if let Some(s) = sp {
            ins.push(ci(s, &[s.len()]));
        }
        v.push(case(&format!("slice_v3_{k}"), "slice_v3", ins, vec![]));
    }
    // (input, begin, end, stride, begin/end/ellipsis/new axis/shrink masks)
    type Ss<'a> = (&'a [usize], &'a [i32], &'a [i32], &'a [i32], [i32; 5]);
    let strided: [Ss; 6] = [
        (&[4, 5, 6], &[1, 0, -5], &[3, 5, 100], &[1, 2, 2], [0; 5]),
        (
            &[4, 5, 6],
            &[0, 3, 0],
            &[0, 0, 4],
            &[1, -1, 1],
            [1, 3, 0, 0, 0],
        ),
        (
            &[4, 5, 6],
            &[2, 0, 0, 1],
            &[3, 0, 5, 0],
            &[1, 1, 1, 1],
            [2, 10, 0, 2, 1],
        ),
        (&[2, 3, 4, 5], &[0, 1], &[0, 3], &[1, 1], [0, 0, 1, 0, 0]),
        (&[4, 5, 6], &[1], &[3], &[1], [0; 5]),
        (&[4, 5, 6], &[5, 4], &[0, 1], &[-2, -1], [0, 0, 0, 0, 0]),
    ];
    for (k, (d, b, e, s, m)) in strided.into_iter().enumerate() {
        v.push(case(
            &format!("strided_slice_{k}"),
            "strided_slice",
            vec![x(d)],
            vec![
                ("begin", iv(b)),
                ("end", iv(e)),
                ("stride", iv(s)),
                ("begin_mask", i(m[0])),
                ("end_mask", i(m[1])),
                ("ellipsis_mask", i(m[2])),
                ("new_axis_mask", i(m[3])),
                ("shrink_axis_mask", i(m[4])),
            ],
        ));
    }
    let crops: [(&[i32], Option<&[i32]>); 3] = [
        (&[-1, -1, 5, 6], None),
        (&[-1, -1, 10, 7], None),
        (&[-1, -1, 5, 10], Some(&[0, 0, 1, 2])),
    ];
    for (k, (size, shift)) in crops.into_iter().enumerate() {
        let params = shift.map_or(vec![], |s| vec![("shift", iv(s))]);
        v.push(case(
            &format!("crop_nd_{k}"),
            "crop_nd",
            vec![x(&[1, 3, 8, 9]), ci(size, &[4])],
            params,
        ));
    }
    let crop_to: [(&[usize], i32, &[i32]); 2] =
        [(&[1, 3, 5, 6], 2, &[1, 2]), (&[1, 2, 6, 9], 1, &[1, 2, 0])];
    for (k, (y, axis, off)) in crop_to.into_iter().enumerate() {
        v.push(case(
            &format!("crop_to_{k}"),
            "crop_to",
            vec![x(&[1, 3, 8, 9]), x(y)],
            vec![("axis", i(axis)), ("offset", iv(off))],
        ));
    }
    // (type, input, output height and width)
    let resizes: [(i32, &[usize], [i32; 2]); 12] = [
        (0, &[1, 2, 5, 7], [8, 4]),
        (0, &[2, 3, 4, 6], [3, 10]),
        (0, &[1, 1, 6, 9], [9, 4]),
        (3, &[1, 2, 6, 7], [4, 3]),
        (3, &[1, 2, 3, 7], [7, 3]),
        (3, &[2, 2, 9, 10], [6, 15]),
        (3, &[2, 3, 4, 4], [6, 6]),
        // nearest: 4 -> 6 and 6 -> 9 have exactly halfway positions
        (2, &[1, 2, 4, 5], [6, 3]),
        (2, &[2, 3, 4, 4], [6, 6]),
        (2, &[1, 2, 2, 7], [3, 3]),
        (2, &[1, 1, 6, 9], [9, 4]),
        (2, &[1, 2, 10, 12], [25, 18]),
    ];
    for (k, (ty, d, hw)) in resizes.into_iter().enumerate() {
        v.push(case(
            &format!("resize2d_{k}"),
            "_resize2d",
            vec![x(d), ci(&[-1, -1, hw[0], hw[1]], &[4])],
            vec![("type", i(ty))],
        ));
    }
    let nn: [(&[usize], i32, [i32; 2]); 2] =
        [(&[1, 2, 4, 6], 2, [6, 9]), (&[2, 4, 6, 3], 1, [3, 4])];
    for (k, (d, dim, hw)) in nn.into_iter().enumerate() {
        v.push(case(
            &format!("resize_nearest_neighbor_{k}"),
            "resize_nearest_neighbor",
            vec![x(d), ci(&hw, &[2])],
            vec![("dim", i(dim))],
        ));
    }
    v.push(case(
        "fused_batch_norm_0",
        "fused_batch_norm",
        vec![x(&[2, 3, 4, 5]), cf(&[3]), cp(&[3]), cf(&[3]), cf(&[3])],
        vec![("dim", i(1)), ("epsilon", P::F(1e-3))],
    ));
    v.push(case(
        "fused_batch_norm_1",
        "fused_batch_norm",
        vec![x(&[4, 6]), cf(&[6]), cp(&[6]), cf(&[6]), cf(&[6])],
        vec![("dim", i(1))],
    ));
    for op in ["prewhiten", "norm_image"] {
        v.push(case(&format!("{op}_0"), op, vec![x(&[2, 3, 4, 5])], vec![]));
        v.push(case(&format!("{op}_1"), op, vec![x(&[3, 7])], vec![]));
    }
    v.push(case(
        "norm_image_2",
        "norm_image",
        vec![x(&[2, 6])],
        vec![("epsilon", P::F(0.1))],
    ));
    for (k, d) in [vec![1, 4, 5, 1], vec![2, 3, 3]].iter().enumerate() {
        v.push(case(
            &format!("force_color_{k}"),
            "force_color",
            vec![x(d)],
            vec![],
        ));
    }
    for (k, d) in [vec![1, 4, 5, 3], vec![2, 3, 1]].iter().enumerate() {
        v.push(case(
            &format!("force_gray_{k}"),
            "force_gray",
            vec![xp(d)],
            vec![],
        ));
    }
    let crops: [(&[usize], [i32; 2]); 2] = [(&[1, 8, 9, 3], [6, 5]), (&[2, 5, 6, 2], [8, 7])];
    for (k, (d, wh)) in crops.into_iter().enumerate() {
        v.push(case(
            &format!("nhwc_center_crop2d_{k}"),
            "_nhwc_center_crop2d",
            vec![x(d)],
            vec![("size", iv(&wh))],
        ));
    }
    let scales: [(&[usize], &[i32], i32); 3] = [
        (&[1, 6, 8, 2], &[5, 4], 0),
        (&[1, 6, 8, 2], &[4], 2),
        (&[1, 9, 5, 3], &[3], 3),
    ];
    for (k, (d, size, ty)) in scales.into_iter().enumerate() {
        v.push(case(
            &format!("nhwc_scale_resize2d_{k}"),
            "_nhwc_scale_resize2d",
            vec![x(d)],
            vec![("size", iv(size)), ("type", i(ty))],
        ));
    }
}
