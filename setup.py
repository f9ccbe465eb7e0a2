"""ament_python package setup: `pip install .` or `colcon build` (installs launch/, config/, urdf/ as share files)."""

from glob import glob

from setuptools import find_packages, setup

package_name = "deadzone_id_ros"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    package_data={package_name: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*.launch.yaml")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/config/robots", glob("config/robots/*.yaml")),
        (f"share/{package_name}/urdf", glob("urdf/*.urdf")),
    ],
    install_requires=["setuptools"],
    # `pip install 'deadzone_id_ros[ray]'`: Ray core for --engine ray (compare, sweep); pinned in constraints.txt
    extras_require={"ray": ["ray>=2.50"]},
    zip_safe=False,
    maintainer="deadzone_id_ros maintainers",
    maintainer_email="maintainers@deadzone-id-ros.invalid",
    description="Dead-zone-aware inverse-dynamics learning and feedforward control for ros2_control arms",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "deadzone-id = deadzone_id_ros.cli.main:main",
            "sim_arm = deadzone_id_ros.nodes.sim_arm:main",
            "excitation = deadzone_id_ros.nodes.excitation:main",
            "recorder = deadzone_id_ros.nodes.recorder:main",
            "feedforward_controller = deadzone_id_ros.nodes.feedforward_controller:main",
            "bag_replay = deadzone_id_ros.nodes.bag_replay:main",
            "force_estimator = deadzone_id_ros.nodes.force_estimator:main",
            "teleop_bilateral = deadzone_id_ros.nodes.teleop_bilateral:main",
        ],
    },
)
