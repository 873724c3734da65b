"""Generate a deterministic archive with Food-101's layout, meta files and realistic JPEG sizes."""


import argparse
import colorsys
import contextlib
import gzip
import io
import json
import logging
import multiprocessing
import os
import sys
import tarfile
from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np
from PIL import Image, ImageDraw
from tqdm import tqdm

from common import PipelineError, atomic_path, setup_cli_logging, snakemake_log

# The real Food-101 class names, sorted as in food-101/meta/classes.txt.
FOOD101_CLASSES = (
    "apple_pie baby_back_ribs baklava beef_carpaccio beef_tartare beet_salad beignets bibimbap "
    "bread_pudding breakfast_burrito bruschetta caesar_salad cannoli caprese_salad carrot_cake "
    "ceviche cheese_plate cheesecake chicken_curry chicken_quesadilla chicken_wings chocolate_cake "
    "chocolate_mousse churros clam_chowder club_sandwich crab_cakes creme_brulee croque_madame "
    "cup_cakes deviled_eggs donuts dumplings edamame eggs_benedict escargots falafel filet_mignon "
    "fish_and_chips foie_gras french_fries french_onion_soup french_toast fried_calamari fried_rice "
    "frozen_yogurt garlic_bread gnocchi greek_salad grilled_cheese_sandwich grilled_salmon guacamole "
    "gyoza hamburger hot_and_sour_soup hot_dog huevos_rancheros hummus ice_cream lasagna "
    "lobster_bisque lobster_roll_sandwich macaroni_and_cheese macarons miso_soup mussels nachos "
    "omelette onion_rings oysters pad_thai paella pancakes panna_cotta peking_duck pho pizza "
    "pork_chop poutine prime_rib pulled_pork_sandwich ramen ravioli red_velvet_cake risotto samosa "
    "sashimi scallops seaweed_salad shrimp_and_grits spaghetti_bolognese spaghetti_carbonara "
    "spring_rolls steak strawberry_shortcake sushi tacos takoyaki tiramisu tuna_tartare waffles"
).split()

# Real image ids are 4-7 digit integers; this range gives ids that look the same.
IMAGE_ID_RANGE = (100_000, 4_000_000)
# Fixed tar metadata so that the same arguments give the same bytes (2011-01-01, Food-101's era).
TAR_MTIME = 1_293_840_000
# Grain strength (grey levels) tuned so that 512-px images average ~46 KB, like Food-101's.
GRAIN_SIGMA = 5.0
TEXTURE_SIGMA = 5.0


def class_style(seed: int, class_index: int) -> dict:
    """Colours and stripe geometry that make a class learnable (a per-class visual signal)."""
    rng = np.random.default_rng([seed, 0, class_index])
    # Golden-ratio spacing keeps the hues of any number of classes spread over the colour wheel.
    hue = (class_index * 0.618034 + rng.uniform(-0.02, 0.02)) % 1.0
    return {
        "hue": hue,
        "saturation": rng.uniform(0.35, 0.85),
        "value": rng.uniform(0.45, 0.85),
        "accent_hue": (hue + rng.uniform(0.2, 0.8)) % 1.0,
        "stripe_angle_rad": rng.uniform(0.0, np.pi),
        "stripe_cycles": rng.uniform(2.0, 14.0),
        "blob_count_max": int(rng.integers(1, 7)),
    }


def hsv_rgb255(hue: float, saturation: float, value: float) -> np.ndarray:
    rgb = colorsys.hsv_to_rgb(hue % 1.0, min(max(saturation, 0.0), 1.0), min(max(value, 0.0), 1.0))
    return np.array(rgb, dtype=np.float32) * 255.0


def image_size_px(rng: np.random.Generator, max_side: int) -> tuple[int, int]:
    """(width, height): the longest side is max_side, like Food-101's rescaled images."""
    short_side = int(round(max_side * rng.uniform(0.6, 1.0)))
    return (max_side, short_side) if rng.random() < 0.5 else (short_side, max_side)


def colour_field(rng: np.random.Generator, style: dict, width: int, height: int) -> np.ndarray:
    """A smooth random colour field around the class's base colour, as float32 3xHxW planes."""
    base = hsv_rgb255(
        style["hue"] + rng.normal(0.0, 0.03),
        style["saturation"] * rng.uniform(0.75, 1.2),
        style["value"] * rng.uniform(0.75, 1.2),
    )
    cells = (base[:, None, None] + rng.normal(0.0, 28.0, (3, 4, 4))).astype(np.float32)
    # Separate planes (not HxWx3) keep every later operation contiguous, which is 3x faster.
    planes = [Image.fromarray(cell, "F").resize((width, height), Image.BICUBIC) for cell in cells]
    return np.stack([np.asarray(plane) for plane in planes])


def stripe_mask(rng: np.random.Generator, style: dict, width: int, height: int) -> np.ndarray:
    """Soft 0..1 stripes whose orientation and frequency are the class's, jittered per image."""
    angle_rad = style["stripe_angle_rad"] + rng.normal(0.0, 0.12)
    radians_per_px = 2 * np.pi * style["stripe_cycles"] * rng.uniform(0.8, 1.25) / max(width, height)
    x = np.arange(width, dtype=np.float32) * np.float32(np.cos(angle_rad) * radians_per_px)
    y = np.arange(height, dtype=np.float32) * np.float32(np.sin(angle_rad) * radians_per_px)
    stripes = np.sin(y[:, None] + x[None, :] + np.float32(rng.uniform(0, 2 * np.pi)))
    stripes += 1.0
    stripes *= 0.5
    return stripes


def blob_mask(rng: np.random.Generator, style: dict, width: int, height: int) -> np.ndarray:
    """A few ellipses at random places and scales (0..1 float32 mask)."""
    mask = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(mask)
    for _ in range(int(rng.integers(1, style["blob_count_max"] + 1))):
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        rx, ry = rng.uniform(0.05, 0.22, 2) * max(width, height)
        draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=255)
    return np.asarray(mask, np.float32) * np.float32(1 / 255)


def grain(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Fine grain plus half-resolution texture: what gives real photos their JPEG size.

    Sums of two random bytes (a triangular, near-Gaussian spread) are 4x cheaper than normals.
    """
    fine = np.frombuffer(rng.bytes(2 * height * width), np.uint8).reshape(2, height, width)
    noise = fine[0].astype(np.float32)
    noise += fine[1]
    noise -= 255.0
    noise *= np.float32(GRAIN_SIGMA / 104.0)  # 104: the standard deviation of that sum
    half_h, half_w = (height + 1) // 2, (width + 1) // 2
    coarse = np.frombuffer(rng.bytes(2 * half_h * half_w), np.uint8).reshape(2, half_h, half_w)
    texture = coarse[0].astype(np.float32) + coarse[1] - 255.0
    texture *= np.float32(TEXTURE_SIGMA / 104.0)
    noise += np.repeat(np.repeat(texture, 2, axis=0), 2, axis=1)[:height, :width]
    return noise


def blend(planes: np.ndarray, colour: np.ndarray, mask: np.ndarray) -> None:
    """planes = planes * (1 - mask) + colour * mask, in place."""
    planes *= 1.0 - mask
    planes += colour[:, None, None] * mask


def render_jpeg(seed: int, class_index: int, image_index: int, max_side: int) -> bytes:
    """One image's JPEG bytes; its RNG depends only on (seed, class, index), so workers agree."""
    style = class_style(seed, class_index)
    rng = np.random.default_rng([seed, 1, class_index, image_index])
    width, height = image_size_px(rng, max_side)
    planes = colour_field(rng, style, width, height)
    accent = hsv_rgb255(style["accent_hue"], style["saturation"], style["value"] * 1.1)
    blend(planes, accent, stripe_mask(rng, style, width, height) * np.float32(rng.uniform(0.25, 0.6)))
    blob_colour = hsv_rgb255(style["hue"] + 0.5, style["saturation"] * 0.8, style["value"])
    blend(planes, blob_colour, blob_mask(rng, style, width, height) * np.float32(rng.uniform(0.4, 0.8)))
    planes *= np.float32(rng.uniform(0.75, 1.25))  # brightness
    planes += grain(rng, width, height)
    np.clip(planes, 0, 255, out=planes)
    image = Image.merge("RGB", [Image.fromarray(plane) for plane in planes.astype(np.uint8)])
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=int(rng.integers(75, 91)))
    return buffer.getvalue()


def _render_task(task: tuple[int, int, int, int]) -> bytes:
    return render_jpeg(*task)


def draw_splits(
    seed: int, classes: list[str], train_per_class: int, test_per_class: int
) -> dict[str, dict[str, list[str]]]:
    """{"train"|"test": {class: ["<class>/<id>", ...]}} with distinct random ids, sorted as in meta."""
    per_class = train_per_class + test_per_class
    low, high = IMAGE_ID_RANGE
    if len(classes) * per_class > high - low:
        raise PipelineError(f"cannot draw {len(classes) * per_class} distinct image ids")
    ids = np.random.default_rng([seed, 2]).choice(high - low, len(classes) * per_class, replace=False)
    splits: dict[str, dict[str, list[str]]] = {"train": {}, "test": {}}
    for class_index, name in enumerate(classes):
        class_ids = (ids[class_index * per_class : (class_index + 1) * per_class] + low).tolist()
        splits["train"][name] = sorted(f"{name}/{i}" for i in class_ids[:train_per_class])
        splits["test"][name] = sorted(f"{name}/{i}" for i in class_ids[train_per_class:])
    return splits


def meta_files(classes: list[str], splits: dict[str, dict[str, list[str]]]) -> dict[str, bytes]:
    """The six files of food-101/meta/, in the real files' formats."""
    files = {
        "classes.txt": "".join(f"{name}\n" for name in classes),
        "labels.txt": "".join(f"{name.replace('_', ' ').capitalize()}\n" for name in classes),
    }
    for split, by_class in splits.items():
        files[f"{split}.txt"] = "".join(f"{entry}\n" for name in classes for entry in by_class[name])
        files[f"{split}.json"] = json.dumps(by_class)
    return {name: text.encode() for name, text in sorted(files.items())}


def tar_info(name: str, size: int = 0, directory: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.uid, info.gid = size, TAR_MTIME, 0, 0
    info.uname = info.gname = ""
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    return info


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    tar.addfile(tar_info(name, len(data)), io.BytesIO(data))


@contextlib.contextmanager
def open_tar_for_writing(path: Path, compressed: bool) -> Iterator[tarfile.TarFile]:
    """A tar writer; gzip with a fixed header (no name, mtime 0) so the bytes are reproducible.

    Level 1: JPEGs do not compress, and higher levels only make the single writer the bottleneck.
    """
    with open(path, "wb") as raw:
        stream: BinaryIO = raw
        with contextlib.ExitStack() as stack:
            if compressed:
                stream = stack.enter_context(
                    gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=1)
                )
            with tarfile.open(fileobj=stream, mode="w", format=tarfile.GNU_FORMAT) as tar:
                yield tar


def image_tasks(
    seed: int, classes: list[str], splits: dict, max_side: int
) -> tuple[list[str], list[tuple[int, int, int, int]]]:
    """Archive names and render arguments of every image, in archive (sorted) order."""
    names, tasks = [], []
    for class_index, name in enumerate(classes):
        entries = sorted(splits["train"][name] + splits["test"][name])
        for image_index, entry in enumerate(entries):
            names.append(f"food-101/images/{entry}.jpg")
            tasks.append((seed, class_index, image_index, max_side))
    return names, tasks


def rendered_images(tasks: list, workers: int) -> Iterator[bytes]:
    """JPEG bytes in task order; a pool renders them while the caller writes the tar."""
    if workers == 1:
        yield from map(_render_task, tasks)
        return
    with multiprocessing.Pool(workers) as pool:
        yield from pool.imap(_render_task, tasks, chunksize=8)


def main(
    output: str | os.PathLike,
    *,
    classes: int = 101,
    train_per_class: int = 750,
    test_per_class: int = 250,
    max_side: int = 512,
    seed: int = 0,
    workers: int | None = None,
) -> None:
    output = Path(output)
    if not 1 <= classes <= len(FOOD101_CLASSES):
        raise PipelineError(f"classes must be 1..{len(FOOD101_CLASSES)}, got {classes}")
    if train_per_class < 1 or test_per_class < 1 or max_side < 8:
        raise PipelineError("train_per_class and test_per_class must be >= 1 and max_side >= 8")
    if not output.name.endswith((".tar", ".tar.gz", ".tgz")):
        raise PipelineError(f"{output}: the archive name must end in .tar or .tar.gz")
    workers = workers or os.cpu_count() or 1
    class_names = list(FOOD101_CLASSES[:classes])
    splits = draw_splits(seed, class_names, train_per_class, test_per_class)
    names, tasks = image_tasks(seed, class_names, splits, max_side)
    logging.info("rendering %d images of %d classes with %d workers", len(tasks), classes, workers)
    with atomic_path(output) as tmp, open_tar_for_writing(tmp, not output.name.endswith(".tar")) as tar:
        for directory in ["food-101", "food-101/images"] + [f"food-101/images/{c}" for c in class_names]:
            tar.addfile(tar_info(directory, directory=True))
        progress = tqdm(total=len(tasks), unit="img", file=sys.stderr, desc="synthetic images")
        for name, jpeg in zip(names, rendered_images(tasks, workers)):
            add_bytes(tar, name, jpeg)
            progress.update()
        progress.close()
        tar.addfile(tar_info("food-101/meta", directory=True))
        for name, data in meta_files(class_names, splits).items():
            add_bytes(tar, f"food-101/meta/{name}", data)
    logging.info("wrote %s (%.1f MB)", output, output.stat().st_size / 1e6)


if __name__ == "__main__":
    if "snakemake" in globals():
        with snakemake_log(snakemake):  # noqa: F821
            synthetic = snakemake.params.synthetic  # noqa: F821
            main(
                snakemake.output[0],  # noqa: F821
                classes=synthetic["classes"],
                train_per_class=synthetic["train_per_class"],
                test_per_class=synthetic["test_per_class"],
                max_side=synthetic["max_side"],
                seed=synthetic["seed"],
                workers=snakemake.threads,  # noqa: F821
            )
    else:
        setup_cli_logging()
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("output", help="archive to write (.tar or .tar.gz)")
        parser.add_argument("--classes", type=int, default=101)
        parser.add_argument("--train-per-class", type=int, default=750)
        parser.add_argument("--test-per-class", type=int, default=250)
        parser.add_argument("--max-side", type=int, default=512)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--workers", type=int, default=None)
        args = parser.parse_args()
        try:
            main(
                args.output,
                classes=args.classes,
                train_per_class=args.train_per_class,
                test_per_class=args.test_per_class,
                max_side=args.max_side,
                seed=args.seed,
                workers=args.workers,
            )
        except PipelineError as err:
            sys.exit(f"error: {err}")
